"""Draft trees: tree attention, the tree verifier, and how each step's shape is chosen."""
