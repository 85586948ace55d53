package host

// SetIndexPageBytes makes a page of the transcript's index at most n bytes of rows until the
// returned function restores it.
func SetIndexPageBytes(n int) (restore func()) {
	was := indexPageBytes
	indexPageBytes = n
	return func() { indexPageBytes = was }
}
