package api

// CapRelease is the capability of POST .../release: releasing a conversation parked on a held
// tool call.
const CapRelease = "release.v1"

// Hold is a conversation's held tool call, as clients see it (State.Hold): the call was not run,
// nor any after it in its batch, and the conversation waits until a release (POST .../release, or
// a message) asks the hooks and the person again, or a Stop answers its calls not_executed.
type Hold struct {
	CallID string `json:"call_id"`
	Reason string `json:"reason"`
	By     string `json:"by"` // hook, or approval (a person's approval nobody answered)
}

// ReleaseRequest is the body of POST /api/conversations/{id}/release (capability release.v1).
type ReleaseRequest struct {
	Op string `json:"op_id"`
}

// ReleaseResult answers a release: Released is false when the conversation was not held (nothing
// to release: a quiet success, as a Stop with nothing in flight is).
type ReleaseResult struct {
	Released bool `json:"released"`
}
