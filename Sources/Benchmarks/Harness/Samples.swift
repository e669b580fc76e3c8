import Foundation

/// A set of measurements of one quantity, with the order statistics the report uses.
struct Samples: Sendable {
    private(set) var values: [Double] = []

    init(_ values: [Double] = []) {
        self.values = values
    }

    mutating func append(_ value: Double) {
        values.append(value)
    }

    var count: Int { values.count }

    /// The middle value (the mean of the two middle ones for an even count); 0 when empty.
    var median: Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The nearest-rank percentile `p` (0…100); 0 when empty.
    func percentile(_ p: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[Swift.min(Swift.max(rank, 1), sorted.count) - 1]
    }

    var min: Double { values.min() ?? 0 }
    var max: Double { values.max() ?? 0 }
}

/// Human-readable numbers for the table.
enum Format {
    /// A duration given in nanoseconds, in the most readable unit.
    static func duration(ns: Double) -> String {
        guard ns.isFinite else { return "n/a" }
        switch ns {
        case ..<1_000: return "\(fixed(ns, ns < 10 ? 1 : 0)) ns"
        case ..<1_000_000: return "\(fixed(ns / 1e3, ns < 10_000 ? 2 : 1)) µs"
        case ..<1_000_000_000: return "\(fixed(ns / 1e6, ns < 10_000_000 ? 2 : 1)) ms"
        default: return "\(fixed(ns / 1e9, 2)) s"
        }
    }

    /// An integer with thousands separators, e.g. `10,000`.
    static func count(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0, (digits.count - offset) % 3 == 0 { grouped.append(",") }
            grouped.append(digit)
        }
        return (value < 0 ? "-" : "") + grouped
    }

    /// A ratio such as `12.3×`.
    static func ratio(_ value: Double) -> String {
        "\(fixed(value, value < 10 ? 2 : (value < 100 ? 1 : 0)))×"
    }

    /// A count per second.
    static func rate(_ perSecond: Double) -> String {
        guard perSecond.isFinite else { return "n/a" }
        return perSecond >= 10_000 ? "\(fixed(perSecond / 1000, 1))k/s" : "\(fixed(perSecond, perSecond < 100 ? 1 : 0))/s"
    }

    /// Mebibytes from kibibytes.
    static func memory(kib: Double) -> String {
        guard kib.isFinite else { return "n/a" }
        return "\(fixed(kib / 1024, 1)) MiB"
    }

    /// `value` with `digits` decimals.
    static func fixed(_ value: Double, _ digits: Int) -> String {
        value.isFinite ? String(format: "%.\(digits)f", value) : "n/a"
    }
}
