from wheelcheck.cli import main

main()
