package fold

import (
	"slices"

	"github.com/reinhq/rein/internal/record"
)

// Grants are the rules the person allowed for the rest of the conversation, answering an approval
// "allow for this conversation", oldest first. They are the conversation's, kept by its record:
// a resume or a host restart keeps them, a fork does not inherit them.
func (s *State) Grants() []string { return slices.Clip(s.grants) }

// judgeScope judges the scope of an answer b to the approval a: an answer for the one call, or an
// allowance for the conversation of exactly the rules a was asked with (granting any other rule
// would allow what the person was never shown).
func judgeScope(seq int64, a Approval, b *record.Approval) error {
	switch b.Scope {
	case "":
		if len(b.Rules) > 0 {
			return refuse(seq, "answers the approval of call %s for the call alone, yet names rules to grant", b.CallID)
		}
		return nil
	case record.ScopeConversation:
		switch {
		case b.State != record.ApprovalAllowed:
			return refuse(seq, "denies call %s for the conversation: only an allowance has that scope", b.CallID)
		case len(a.Rules) == 0:
			return refuse(seq, "allows call %s for the conversation, but it was asked with no rule to grant", b.CallID)
		case !slices.Equal(a.Rules, b.Rules):
			return refuse(seq, "grants the rules %q for call %s, which was asked with %q", b.Rules, b.CallID, a.Rules)
		}
		return nil
	}
	return refuse(seq, "answers the approval of call %s with the scope %q: a scope is empty (the call) or %q", b.CallID, b.Scope, record.ScopeConversation)
}
