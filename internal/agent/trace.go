package agent

// Mark names a moment of a turn that Config.Trace is told of, so that a benchmark can say where
// a tool turn's time goes (rein bench turns). Marks cost nothing when Trace is nil.
type Mark string

// The marks, in the order a tool turn passes them.
const (
	MarkEncode    Mark = "encode"    // the request is about to be rendered and encoded
	MarkValidate  Mark = "validate"  // it is encoded; validation begins
	MarkValidated Mark = "validated" // it is valid
	MarkSend      Mark = "send"      // turn_started is appended; sending begins
	MarkReceived  Mark = "received"  // the reply's stream has ended (Send returned)
	MarkCommit    Mark = "commit"    // the reply was admitted; its commit (with fsync) begins
	MarkCommitted Mark = "committed" // the assistant message is durable
	MarkTool      Mark = "tool"      // a tool call is about to run
	MarkToolDone  Mark = "tool_done" // it returned
	MarkResults   Mark = "results"   // the batch's results are appended
)

// mark tells Config.Trace that the loop reached m.
func (a *Agent) mark(m Mark) {
	if a.cfg.Trace != nil {
		a.cfg.Trace(m)
	}
}
