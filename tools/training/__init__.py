"""Training: the scripts that train the demo models (train_*.py) and the torch networks they train (*_nets.py)."""
