module gateway.example/examplego

go 1.19
