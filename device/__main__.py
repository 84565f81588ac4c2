from device.cli import main

raise SystemExit(main())
