package corpus

// extra holds further cases (ORM-style output and edge cases).
var extra = []Case{}
