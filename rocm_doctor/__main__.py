from rocm_doctor.cli.main import main

main()
