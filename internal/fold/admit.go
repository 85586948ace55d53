package fold

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reinhq/rein/internal/record"
)

// Draft is a provider's reply as it arrived, before admission: tool-call arguments exactly as
// received (any bytes), the indices of tool calls whose arguments were cut off, the neutral stop
// reason, and whether Stop cut the stream.
type Draft struct {
	Parts      []record.Part
	Incomplete []int
	StopReason string
	Stopped    bool
}

// Verdict is what admission concluded about a reply.
type Verdict int

// Verdicts of admission. Empty and Truncated are committed (with a stub) and nudged; Nothing means
// there is nothing to commit (a stopped stream that had produced nothing).
const (
	Admitted Verdict = iota
	Empty
	Truncated
	Nothing
)

// Repair is one change admission made, with the original for the record.
type Repair struct {
	What     string
	Original json.RawMessage
}

// EmptyStub is the text an empty reply is committed with. It is a placeholder a provider will
// accept, not words put in the model's mouth: it says what happened.
const EmptyStub = "(no reply)"

// Admit applies DESIGN §6 to a reply drafted for turn: it returns the parts to commit, the repairs
// made, and the verdict. It never fails: whatever a provider sent becomes a message every
// provider accepts, and every change is reported.
func (s *State) Admit(turn int64, d Draft) ([]record.Part, []Repair, Verdict) {
	var out []record.Part
	var repairs []Repair
	cut := map[int]bool{}
	for _, i := range d.Incomplete {
		cut[i] = true
	}
	ids := map[string]bool{}
	minted := 0
	calls, cutCalls := 0, 0
	for i, p := range d.Parts {
		switch p.Type {
		case record.PartText:
			if p.Text == "" {
				continue // an empty text block is refused by providers; nothing was said
			}
			out = append(out, record.Part{Type: record.PartText, Text: p.Text})
		case record.PartThinking:
			if p.Text == "" && p.Signature == "" && p.Data == "" {
				continue
			}
			out = append(out, record.Part{Type: record.PartThinking, Text: p.Text, Signature: p.Signature, Data: p.Data})
		case record.PartRedacted:
			if p.Data == "" {
				continue
			}
			out = append(out, record.Part{Type: record.PartRedacted, Data: p.Data})
		case record.PartServerTool:
			// A provider's own tool's block (web search), kept as received for its wire.
			if why := checkServerTool(record.Assistant, p); why != "" {
				orig, _ := json.Marshal(p)
				repairs = append(repairs, Repair{What: "dropped a server tool block: the reply " + why, Original: orig})
				continue
			}
			out = append(out, record.Part{Type: record.PartServerTool, Wire: p.Wire, Name: p.Name, CallID: p.CallID, Text: p.Text, Data: p.Data})
		case record.PartToolCall:
			orig, _ := json.Marshal(map[string]string{"id": p.CallID, "name": p.Name, "args": string(p.Args)})
			if cut[i] {
				cutCalls++
				repairs = append(repairs, Repair{What: fmt.Sprintf("dropped tool call %s (%s): its arguments were cut off", p.CallID, p.Name), Original: orig})
				continue
			}
			c := record.Part{Type: record.PartToolCall, CallID: p.CallID, Name: p.Name}
			if !validCallID(c.CallID) || s.usedCall(c.CallID) || ids[c.CallID] {
				for {
					minted++
					c.CallID = fmt.Sprintf("call_rein_%d_%d", turn, minted)
					if !s.usedCall(c.CallID) && !ids[c.CallID] {
						break
					}
				}
				repairs = append(repairs, Repair{What: fmt.Sprintf("tool call id %q was missing, malformed or already used; it is now %s", p.CallID, c.CallID), Original: orig})
			}
			if !validToolName(c.Name) {
				c.Name = repairName(c.Name)
				repairs = append(repairs, Repair{What: fmt.Sprintf("tool name %q is not one providers accept; it is now %s", p.Name, c.Name), Original: orig})
			}
			args := bytes.TrimSpace(p.Args)
			if len(args) == 0 {
				args = []byte("{}")
			}
			if !isObject(args) {
				repairs = append(repairs, Repair{What: fmt.Sprintf("tool call %s (%s) arguments were not a JSON object; they are now {}", c.CallID, c.Name), Original: orig})
				args = []byte("{}")
			}
			var compact bytes.Buffer
			_ = json.Compact(&compact, args)
			c.Args = compact.Bytes()
			ids[c.CallID] = true
			calls++
			out = append(out, c)
		default:
			orig, _ := json.Marshal(p)
			repairs = append(repairs, Repair{What: fmt.Sprintf("dropped a %s part, which an assistant message may not carry", p.Type), Original: orig})
		}
	}
	hasText := false
	for _, p := range out {
		if p.Type == record.PartText && strings.TrimSpace(p.Text) != "" {
			hasText = true
		}
	}
	if calls > 0 || hasText {
		return out, repairs, Admitted
	}
	if d.Stopped {
		return nil, repairs, Nothing
	}
	verdict := Empty
	if d.StopReason == "max_tokens" || cutCalls > 0 {
		verdict = Truncated
	}
	// Whitespace-only text would be refused once trimmed; replace it with the stub.
	kept := out[:0]
	for _, p := range out {
		if p.Type != record.PartText {
			kept = append(kept, p)
		}
	}
	out = append(kept, record.Part{Type: record.PartText, Text: EmptyStub})
	repairs = append(repairs, Repair{What: "the reply had no text and no tool call; committed with a stub so later requests stay valid"})
	return out, repairs, verdict
}

func repairName(n string) string {
	var b strings.Builder
	for _, c := range []byte(n) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
		if b.Len() == 64 {
			break
		}
	}
	if b.Len() == 0 {
		return "unnamed_tool"
	}
	return b.String()
}
