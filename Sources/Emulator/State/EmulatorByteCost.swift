import Foundation

/// What a kept record costs against ``EmulatorLimits/maxStoredBytes``,
/// ``EmulatorLimits/maxLoggedBytes`` and ``EmulatorLimits/maxCustomerPropertyBytes``: an estimate
/// of the memory it takes, counting the UTF-8 bytes of every string, 16 bytes of bookkeeping per
/// string, number or container, and 64 per record. It only needs to grow with what a client sends:
/// a client cannot store more than the budget by sending many small values, nor a few large ones.
enum EmulatorByteCost {
    /// Per record (event, update, link, customer, logged request).
    static let recordOverhead = 64
    /// Per string, number, boolean, null, array or object.
    static let valueOverhead = 16

    static func of(_ string: String) -> Int {
        string.utf8.count + valueOverhead
    }

    static func of(_ ids: [String: String]) -> Int {
        ids.reduce(valueOverhead) { $0 + of($1.key) + of($1.value) }
    }

    /// Recursive, like the values themselves: bodies are depth-checked before they are decoded
    /// (``EmulatorJSON/maximumDepth``), so the recursion is as shallow as the decoder's.
    static func of(_ value: EmulatorJSON) -> Int {
        switch value {
        case .null, .bool, .number: return valueOverhead
        case .string(let string): return of(string)
        case .array(let array): return array.reduce(valueOverhead) { $0 + of($1) }
        case .object(let object): return of(properties: object)
        }
    }

    static func of(properties: [String: EmulatorJSON]) -> Int {
        properties.reduce(valueOverhead) { $0 + of($1.key) + of($1.value) }
    }

    static func of(_ id: EmulatorExternalID) -> Int {
        of(id.name) + of(id.value)
    }

    static func of(_ event: EmulatorEvent) -> Int {
        recordOverhead + of(event.eventType) + of(event.customerIds) + of(properties: event.properties)
    }

    static func of(_ update: EmulatorCustomerUpdate) -> Int {
        recordOverhead + of(update.customerIds) + of(properties: update.properties)
    }

    static func of(_ link: EmulatorLink) -> Int {
        recordOverhead + of(link.cookie) + of(link.externalIds)
    }

    /// A customer without its properties: the cookie and the linked ids.
    static func ofIdentity(_ customer: EmulatorCustomer) -> Int {
        customer.linkedIds.reduce(recordOverhead + of(customer.cookie)) { $0 + of($1) }
    }

    static func of(_ customer: EmulatorCustomer) -> Int {
        ofIdentity(customer) + of(properties: customer.properties)
    }

    static func of(_ request: EmulatorRecordedRequest) -> Int {
        var cost = recordOverhead + of(request.method) + of(request.path) + request.body.count
        cost += request.rawQuery.map(of) ?? 0
        cost += request.pathComponents.reduce(0) { $0 + of($1) }
        cost += of(request.query) + of(request.headers)
        return cost
    }
}
