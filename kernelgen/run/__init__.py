"""A run: the optimize loop, the evaluators it judges through, and the workers behind them."""
