/// What the emulator knows about ODP audiences.
struct EmulatorODPState: Sendable {
    /// The `x-api-key` values accepted; `nil` accepts any request.
    var apiKeys: Set<String>?
    /// Fixed qualified audiences by user id; a user listed here is known.
    var fixedAudiences: [String: Set<String>] = [:]
    /// Rules evaluated on the events that count for a user.
    var rules: [EmulatorAudienceRule] = []
    /// The answer for users without a fixed answer or events.
    var unknownUser = EmulatorUnknownUserAnswer.invalidIdentifier

    /// Every audience name the emulator knows of, sorted: fixed answers and rules.
    var knownAudiences: [String] {
        Set(fixedAudiences.values.flatMap { $0 } + rules.map(\.audience)).sorted()
    }
}
