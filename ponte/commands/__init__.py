"""One module per `ponte` subcommand; see `ponte.cli`."""
