"""The `midturn` command's parts kept out of cli.py: each command's code, the help texts,
the wording of errors for a person, and what the commands share."""
