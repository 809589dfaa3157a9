package funcs

var timeScalars = []*ScalarDecl{}
