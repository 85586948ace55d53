//go:build race

package host_test

// raceDetector: the race detector slows the host about tenfold, so the race test plays fewer
// rounds under it.
const raceDetector = true
