"""How many tokens each step drafts: the chooser contract, a fixed γ, `gamma="auto"`, and its payoff."""
