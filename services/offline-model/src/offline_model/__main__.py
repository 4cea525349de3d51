from offline_model.cli import main

main()
