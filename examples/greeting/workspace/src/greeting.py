"""Greetings for the command line."""


def greet(name):
    return "Hello, " + name


def farewell(name):
    return "Goodbye, " + name


if __name__ == "__main__":
    print(greet("world"))
