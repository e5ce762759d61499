module kilnffi

go 1.19
