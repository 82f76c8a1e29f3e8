"""Parts of the `midturn` command kept out of cli.py: the help texts, the wording of
errors for a person, and the `midturn answer` token search."""
