"""A small Java project with every case a type-aware recipe must tell apart (before and after)."""

from __future__ import annotations

RECIPE = """\
recipe_id: ids
language: java
summary: LegacyIdGenerator.generate() to IdGenerator.nextId()
operations:
  - type: method_invocation_replace
    from: com.acme.ids.LegacyIdGenerator generate()
    to: com.acme.ids.IdGenerator nextId()
imports:
  add: [com.acme.ids.IdGenerator]
  remove: [com.acme.ids.LegacyIdGenerator]
"""

LIBRARY = {
    "src/com/acme/ids/LegacyIdGenerator.java": """\
package com.acme.ids;

public final class LegacyIdGenerator {
    private LegacyIdGenerator() {}

    public static long generate() {
        return IdGenerator.nextId();
    }

    public static String generate(String prefix) {
        return prefix + IdGenerator.nextId();
    }
}
""",
    "src/com/acme/ids/IdGenerator.java": """\
package com.acme.ids;

public final class IdGenerator {
    private static long next = 1;

    private IdGenerator() {}

    public static long nextId() {
        return next++;
    }
}
""",
    "src/com/other/IdGenerator.java": """\
package com.other;

public final class IdGenerator {
    public static long other() {
        return 7;
    }
}
""",
    "src/com/other/LegacyIdGenerator.java": """\
package com.other;

public final class LegacyIdGenerator {
    public static long generate() {
        return 8;
    }
}
""",
}

# path: (before, after); after None: must stay as it is
CASES: dict[str, tuple[str, str | None]] = {
    "src/app/Overload.java": (
        """\
package app;

import com.acme.ids.LegacyIdGenerator;

class Overload {
    long plain() {
        return LegacyIdGenerator.generate();
    }

    String prefixed() {
        return LegacyIdGenerator.generate("pre-");
    }
}
""",
        """\
package app;

import com.acme.ids.LegacyIdGenerator;
import com.acme.ids.IdGenerator;

class Overload {
    long plain() {
        return IdGenerator.nextId();
    }

    String prefixed() {
        return LegacyIdGenerator.generate("pre-");
    }
}
""",
    ),
    "src/app/Conflict.java": (
        """\
package app;

import com.acme.ids.LegacyIdGenerator;
import com.other.IdGenerator;

class Conflict {
    long ids() {
        return LegacyIdGenerator.generate() + IdGenerator.other();
    }
}
""",
        """\
package app;

import com.other.IdGenerator;

class Conflict {
    long ids() {
        return com.acme.ids.IdGenerator.nextId() + IdGenerator.other();
    }
}
""",
    ),
    "src/app/WildcardConflict.java": (
        """\
package app;

import com.acme.ids.LegacyIdGenerator;
import com.other.*;

class WildcardConflict {
    long ids() {
        return LegacyIdGenerator.generate() + IdGenerator.other();
    }
}
""",
        """\
package app;

import com.other.*;

class WildcardConflict {
    long ids() {
        return com.acme.ids.IdGenerator.nextId() + IdGenerator.other();
    }
}
""",
    ),
    "src/app/Reference.java": (
        """\
package app;

import com.acme.ids.LegacyIdGenerator;
import java.util.function.Function;
import java.util.function.Supplier;

class Reference {
    Supplier<Long> ids = LegacyIdGenerator::generate;
    Function<String, String> names = LegacyIdGenerator::generate;
}
""",
        """\
package app;

import com.acme.ids.LegacyIdGenerator;
import java.util.function.Function;
import java.util.function.Supplier;
import com.acme.ids.IdGenerator;

class Reference {
    Supplier<Long> ids = IdGenerator::nextId;
    Function<String, String> names = LegacyIdGenerator::generate;
}
""",
    ),
    "src/app/StaticImport.java": (
        """\
package app;

import static com.acme.ids.LegacyIdGenerator.generate;

class StaticImport {
    long id() {
        return generate();
    }
}
""",
        """\
package app;

import static com.acme.ids.IdGenerator.nextId;

class StaticImport {
    long id() {
        return nextId();
    }
}
""",
    ),
    "src/app/StaticImportMixed.java": (
        """\
package app;

import static com.acme.ids.LegacyIdGenerator.generate;

class StaticImportMixed {
    String id() {
        return generate("x-") + generate();
    }
}
""",
        """\
package app;

import static com.acme.ids.LegacyIdGenerator.generate;
import static com.acme.ids.IdGenerator.nextId;

class StaticImportMixed {
    String id() {
        return generate("x-") + nextId();
    }
}
""",
    ),
    "src/app/StaticImportTaken.java": (
        """\
package app;

import static com.acme.ids.LegacyIdGenerator.generate;

class StaticImportTaken {
    long id() {
        return generate() + nextId();
    }

    long nextId() {
        return 0;
    }
}
""",
        """\
package app;

import com.acme.ids.IdGenerator;

class StaticImportTaken {
    long id() {
        return IdGenerator.nextId() + nextId();
    }

    long nextId() {
        return 0;
    }
}
""",
    ),
    "src/app/Qualified.java": (
        """\
package app;

class Qualified {
    long id() {
        return com.acme.ids.LegacyIdGenerator.generate();
    }
}
""",
        """\
package app;

class Qualified {
    long id() {
        return com.acme.ids.IdGenerator.nextId();
    }
}
""",
    ),
    "src/app/Lookalikes.java": (
        """\
package app;

import com.other.LegacyIdGenerator;
import java.util.function.Supplier;

class Lookalikes {
    interface Generator {
        long generate();
    }

    long fromAnotherPackage() {
        return LegacyIdGenerator.generate();
    }

    long sameNameOtherType(Generator generator) {
        return generator.generate();
    }

    Supplier<Long> reference() {
        return LegacyIdGenerator::generate;
    }

    String prefixed() {
        return com.acme.ids.LegacyIdGenerator.generate("pre-");
    }

    String text() {
        return "LegacyIdGenerator.generate()";
    }
}
""",
        None,
    ),
}


def before() -> dict[str, str]:
    """The whole project before the recipe."""
    return {**LIBRARY, **{path: texts[0] for path, texts in CASES.items()}}


def after() -> dict[str, str]:
    """The whole project as the recipe must leave it."""
    return {**LIBRARY, **{path: texts[1] or texts[0] for path, texts in CASES.items()}}
