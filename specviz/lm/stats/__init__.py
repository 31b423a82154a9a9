"""What a run measured: acceptance statistics, token fates, the run comparison and its prompts."""
