/// A small parser for `--name value` options and `--flag` switches.
struct Arguments {
    private var values: [String: String] = [:]
    private var flags: Set<String> = []

    /// Parses `arguments`, accepting only the given option names (without `--`).
    init(_ arguments: [String], options: Set<String>, flags allowedFlags: Set<String> = []) throws {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            guard argument.hasPrefix("--") else { throw UsageError(reason: "unexpected argument '\(argument)'") }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if name == "help" || allowedFlags.contains(name) {
                flags.insert(name)
            } else if options.contains(name) {
                if let inlineValue {
                    values[name] = inlineValue
                } else {
                    index += 1
                    guard index < arguments.count else { throw UsageError(reason: "--\(name) needs a value") }
                    values[name] = arguments[index]
                }
            } else {
                throw UsageError(reason: "unknown option --\(name)")
            }
            index += 1
        }
    }

    /// Whether `--help` was given.
    var wantsHelp: Bool { flags.contains("help") }

    /// Whether the switch was given.
    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The value of an option, if given.
    func value(_ name: String) -> String? { values[name] }

    /// The value of a required option.
    func required(_ name: String) throws -> String {
        guard let value = values[name], !value.isEmpty else { throw UsageError(reason: "--\(name) is required") }
        return value
    }
}
