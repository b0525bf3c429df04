module timekeeper.test/go-tlog

go 1.24.0

require (
	github.com/transparency-dev/formats v0.1.0
	golang.org/x/mod v0.32.0
)
