extension EmulatorState {
    /// The events that count for an ODP user id: events tracked with an id of that value (any id
    /// name), events of cookies linked to such an id, and for `vuid_<cookie>` the cookie's events.
    func events(forAudienceUser userId: String) -> [EmulatorEvent] {
        var cookies = Set(customers.values.filter { customer in
            customer.linkedIds.contains { $0.value == userId }
        }.map(\.cookie))
        if userId.lowercased().hasPrefix("vuid_") { cookies.insert(String(userId.dropFirst(5))) }
        cookies.insert(userId)
        let linkedIds = cookies.reduce(into: Set<EmulatorExternalID>()) { ids, cookie in
            ids.formUnion(customers[cookie]?.linkedIds ?? [])
        }
        return events.filter { event in
            event.customerIds.contains { name, value in
                value == userId || (name == "cookie" && cookies.contains(value))
                    || linkedIds.contains(EmulatorExternalID(name: name, value: value))
            }
        }
    }

    /// The audiences `userId` qualifies for (fixed answer plus rules), or `nil` for an unknown user.
    func qualifiedAudiences(forUser userId: String) -> Set<String>? {
        let events = events(forAudienceUser: userId)
        let fixed = odp.fixedAudiences[userId]
        guard fixed != nil || !events.isEmpty else { return nil }
        var qualified = fixed ?? []
        for rule in odp.rules where rule.matches(events) { qualified.insert(rule.audience) }
        return qualified
    }
}
