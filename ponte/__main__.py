from ponte.cli import main

raise SystemExit(main())
