from fp8check.cli.app import main

main()
