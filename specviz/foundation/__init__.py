"""The foundation: input checks, messages in two languages, colours, budgets, child processes."""
