package bucket

// LuaDuration is luaDuration, for tests.
var LuaDuration = luaDuration
