// Long-lived driver around llm-diff-patcher's aider_port, for the differential oracle and bench.
// Usage: node driver.js PACKAGE_DIR. Reads one JSON request per stdin line:
//   {"source": str, "diff": str}                 -> {"ok": bool, "out": str}
//   {"source": str, "diff": str, "repeat": n}    -> {"ok": bool, "out": str, "ns": [n timings]}
// Every answer also counts the hunks found ("hunks") and those that located ("applied"), so that a
// caller can tell a partial result from a whole one.
// and answers {"error": str} when a request cannot be served. Timings are taken inside node so the
// pipe is not part of them.
"use strict";

const path = require("path");
const readline = require("readline");

const packageDir = process.argv[2];
if (!packageDir) {
  process.stderr.write("usage: node driver.js PACKAGE_DIR\n");
  process.exit(2);
}
const port = path.join(packageDir, "dist", "aider_port");
const { findDiffs } = require(path.join(port, "aider_udiff.js"));
const { applyHunks } = require(path.join(port, "apply_hunk.js"));

// Step 1 of the pipeline in ../shared/parity/README.md: one fenced block, one placeholder file.
function normalise(diff) {
  const at = diff.indexOf("@@");
  if (at > 0) {
    diff = diff.slice(at);
  }
  const firstEnd = diff.indexOf("\n");
  let headed = false;
  if (firstEnd >= 0) {
    const rest = diff.slice(firstEnd + 1);
    const secondEnd = rest.indexOf("\n");
    const second = secondEnd >= 0 ? rest.slice(0, secondEnd) : rest;
    headed = diff.startsWith("--- ") && second.startsWith("+++ ");
  }
  if (!headed) {
    diff = "--- source\n+++ source\n" + diff;
  }
  return "```diff\n" + diff + "\n```";
}

// Steps 2-4: apply every hunk of every group in turn; a hunk that does not locate is skipped.
function pipeline(source, diff) {
  const groups = findDiffs(normalise(diff));
  let text = source;
  let hunks = 0;
  let applied = 0;
  for (const group of groups) {
    for (const hunk of group.hunks) {
      hunks++;
      const r = applyHunks(text, hunk);
      if (r) {
        text = r;
        applied++;
      }
    }
  }
  return { ok: groups.length > 0, out: text, hunks, applied };
}

function serve(request) {
  if (typeof request.source !== "string" || typeof request.diff !== "string") {
    return { error: "request needs string fields source and diff" };
  }
  const repeat = Number.isInteger(request.repeat) && request.repeat > 0 ? request.repeat : 0;
  if (!repeat) {
    return pipeline(request.source, request.diff);
  }
  const ns = [];
  let answer = null;
  for (let i = 0; i < repeat; i++) {
    const start = process.hrtime.bigint();
    answer = pipeline(request.source, request.diff);
    ns.push(Number(process.hrtime.bigint() - start));
  }
  answer.ns = ns;
  return answer;
}

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  let answer;
  try {
    answer = serve(JSON.parse(line));
  } catch (error) {
    answer = { error: String(error && error.stack ? error.stack : error) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
});
