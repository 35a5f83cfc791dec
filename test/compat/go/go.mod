module tributary/compat/go

// analytics-go 2.x predates Go modules (no go.mod) and the module proxy serves its last
// v2 release, 2.1.1, only by commit: 2d840d861c32 is the 2.1.1 release commit
// (2016-04-26, the date of History.md's v2.1.1 entry; the next commit adds the cli).
// Its dependencies are pinned to that era: uuid at the revision the library's
// Godeps.json names, backo-go at the revision current at the release, go-strftime at the
// oldest revision the proxy serves (Godeps names an older one; both format the library's
// `%Y-%m-%dT%H:%M:%S%z` the same way).
go 1.21

require (
	github.com/segmentio/analytics-go v0.0.0-20160426181448-2d840d861c32
	github.com/segmentio/backo-go v0.0.0-20160424052352-204274ad699c
)

require (
	github.com/bmizerany/assert v0.0.0-20160611221934-b7ed37b82869 // indirect
	github.com/jehiah/go-strftime v0.0.0-20171201141054-1d33003b3869 // indirect
	github.com/kr/pretty v0.3.1 // indirect
	github.com/xtgo/uuid v0.0.0-20140804021211-a0b114877d4c // indirect
)
