module kiln

go 1.19
