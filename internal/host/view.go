package host

import (
	"time"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/record"
)

// The host's side of the wire (package api): the fold's state, rows, residues and the lock's
// holder become the API's own types here, so nothing behind the host crosses it.

// StateOf folds a session's state into the published conversation state.
func StateOf(st *fold.State) api.State {
	s := api.State{Phase: st.Phase().String(), InFlight: st.InFlight(), Seq: st.Seq(), Submissions: []api.Submission{}, Approvals: []api.Approval{}}
	for _, a := range st.Approvals() {
		s.Approvals = append(s.Approvals, api.Approval{CallID: a.CallID, Name: a.Name, Args: a.Args, Diff: a.Diff, Rules: a.Rules})
	}
	if s.InFlight {
		s.Turn = st.Newest()
	}
	for _, sub := range st.OpenSubmissions() {
		s.Submissions = append(s.Submissions, api.Submission{ID: sub.ID, Op: sub.Op, State: public(sub.State), Text: sub.Text, Attachments: orEmpty(sub.Attachments), Queue: sub.Queue})
	}
	if p, ok := st.Parking(); ok {
		s.Hold = &api.Hold{CallID: p.CallID, Reason: p.Reason, By: p.By}
	}
	s.Working = api.Working(s)
	return s
}

// view is a conversation's view with the times it is ordered and indexed by.
type view struct {
	api.View
	created, updated int64 // unix ms
}

// viewOf is a conversation's view from its folded state.
func viewOf(id string, st *fold.State) view {
	m := st.Meta()
	v := view{View: api.View{ID: id, Title: m.Title, Closed: m.Closed, State: StateOf(st)}, created: m.Created, updated: st.LastTime()}
	if m.Backend != api.BackendRein {
		v.Backend = m.Backend
	}
	if v.Title == "" {
		for _, t := range st.Turns() {
			if t.Role == record.User && t.Kind == fold.Own {
				v.Title = t.Label
				break
			}
		}
	}
	v.Created, v.Updated = stamp(v.created), stampNano(v.updated)
	return v
}

// rowView is the view of a resting conversation, from its index row: nothing is in flight and no
// submission is open, as nothing rests that has work.
func rowView(r Row) view {
	return view{View: api.View{ID: r.ID, Title: r.Title, Closed: r.Closed, Created: stamp(r.Created), Updated: stampNano(r.Updated), Backend: r.Backend,
		State: api.State{Phase: r.Phase, Working: r.Working, Submissions: []api.Submission{}, Approvals: []api.Approval{}, Seq: r.Seq}},
		created: r.Created, updated: r.Updated}
}

func stamp(ms int64) string     { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }
func stampNano(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano) }

// holderOf is the wire's holder of a record's lock.
func holderOf(h fsys.Holder) *api.Holder {
	w := api.Holder(h)
	return &w
}

// surveyOf is the wire's survey.
func surveyOf(sv fold.Survey) api.Survey {
	return api.Survey{Rows: rowsOf(sv.Rows), Bytes: sv.Bytes, SystemBytes: sv.SystemBytes}
}

// rowsOf is the wire's rows of the survey or the transcript index.
func rowsOf(rows []fold.Row) []api.Row {
	out := make([]api.Row, len(rows))
	for i, r := range rows {
		out[i] = rowOf(r)
	}
	return out
}

// rowOf is the wire's row.
func rowOf(r fold.Row) api.Row {
	return api.Row{From: r.From, To: r.To, Role: r.Role, Kind: api.RowKind(r.Kind), Label: r.Label, Bytes: r.Bytes, Held: r.Held}
}

// residuesOf is the wire's residues.
func residuesOf(rs []fold.Residue) []api.Residue {
	out := make([]api.Residue, len(rs))
	for i, r := range rs {
		out[i] = api.Residue{From: r.From, To: r.To, Note: r.Note, By: r.By, Parent: r.Parent, Withdrawn: r.Withdrawn, Seq: r.Seq}
	}
	return out
}
