"""What every replay command shares: its errors, its input options and the registry of predictors it compares."""
