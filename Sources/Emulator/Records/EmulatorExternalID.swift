/// One customer id other than the cookie, e.g. `registered` = `jane@example.com`.
public struct EmulatorExternalID: Hashable, Sendable {
    /// The id's name, e.g. `registered`.
    public var name: String
    /// The id's value.
    public var value: String

    /// Creates an id.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
