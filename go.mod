module github.com/ccmesh/ccmesh

go 1.26
