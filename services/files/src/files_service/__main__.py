from files_service.cli import main

main()
