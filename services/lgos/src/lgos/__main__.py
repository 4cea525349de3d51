from lgos.cli import main

main()
