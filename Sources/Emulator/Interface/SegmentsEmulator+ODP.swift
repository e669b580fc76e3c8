import Foundation

extension SegmentsEmulator {
    /// GraphQL requests must carry `x-api-key` with one of `keys`, else they get 401. `nil` (the
    /// default) accepts any request.
    public func acceptODPAPIKeys(_ keys: Set<String>?) {
        state.withLock { $0.odp.apiKeys = keys }
    }

    /// Makes `userId` a known ODP user qualified for exactly `audiences` (plus what rules grant).
    public func setQualifiedAudiences(_ audiences: Set<String>, forUser userId: String) {
        state.withLock { $0.odp.fixedAudiences[userId] = audiences }
    }

    /// Forgets the fixed answer of `userId`.
    public func clearQualifiedAudiences(forUser userId: String) {
        state.withLock { _ = $0.odp.fixedAudiences.removeValue(forKey: userId) }
    }

    /// Replaces the audience rules.
    ///
    /// A rule is evaluated on the events that count for the queried user id: events tracked with
    /// an id of that value (any id name, e.g. `registered`), events of cookies linked to such an id,
    /// and for a `vuid_<cookie>` id the events of `<cookie>`. A user with such events is known.
    public func setAudienceRules(_ rules: [EmulatorAudienceRule]) {
        state.withLock { $0.odp.rules = rules }
    }

    /// The current audience rules.
    public var audienceRules: [EmulatorAudienceRule] {
        state.withLock { $0.odp.rules }
    }

    /// How a user without a fixed answer or events is answered; `.invalidIdentifier` by default.
    public func setUnknownUserAnswer(_ answer: EmulatorUnknownUserAnswer) {
        state.withLock { $0.odp.unknownUser = answer }
    }

    /// The audiences `userId` qualifies for now (fixed answer plus rules), or `nil` when unknown.
    public func qualifiedAudiences(forUser userId: String) -> Set<String>? {
        state.withLock { $0.qualifiedAudiences(forUser: userId) }
    }
}
