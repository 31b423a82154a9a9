"""Samplers: draws by the rules (numpy and torch), chains, trees, and the audit of a verifier."""
