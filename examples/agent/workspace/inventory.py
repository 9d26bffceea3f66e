"""A tiny stock list, the example agent's workspace."""


def restock(items, amount):
    updated = {}
    for name, count in items.items():
        updated[name] = count + amount
    return updated


def low_stock(items, threshold):
    return sorted(name for name, count in items.items() if count < threshold)
