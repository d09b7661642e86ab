module gateway.example/goadapter

go 1.19
