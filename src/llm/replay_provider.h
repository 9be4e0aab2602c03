// Re-runs a stored run without any network: each request gets the recorded answer to the same
// prompt (else the next unused one), read again from its raw body, so that a replayed run takes every branch the original took
// (garbage replies included). The public entry point is MakeReplayProvider (provider.h).
#pragma once

#include <string>

#include "llm/provider.h"

namespace ksmith {

/// The LlmCall a recorded call replays as, `request` being what the replaying run asked now.
/// A recorded 200 is parsed again (tokens included); any other recorded body too, so that its
/// failure reads the same; a recorded error without a body comes back as that error. The cost is 0
/// (a replay spends nothing); the tokens are the recorded reply's, so token budgets stop where
/// the original run's did.
LlmCall ReplayRecordedCall(const RecordedCall& recorded, const ChatRequest& request);

}  // namespace ksmith
