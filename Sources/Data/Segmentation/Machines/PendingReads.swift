import Foundation
import SegmentsDomain

/// The one-shot reads that wait — for `configure`, for the baseline, or for the flight in
/// progress — each answered exactly once (<doc:Behaviour#G1>–<doc:Behaviour#G6>).
///
/// A value whose transitions return the ``Action``s they decided; the client's machine
/// (``SegmentationStateMachine``) decides when a read waits and when the waiting ones are answered.
struct PendingReads: Sendable {
    /// A one-shot read waiting for configuration, the baseline, or a flight.
    struct Read: Sendable {
        /// Identifies the read, so a cancelled task can withdraw it.
        let id: Int
        let category: SegmentCategory
        let force: Bool
        let reply: Reply
        /// How often the read was retried because the customer changed (<doc:Behaviour#G6>).
        var customerRetries = 0
        /// The customer it waits for: a read that joined a flight of an earlier customer is not
        /// charged a retry when that flight is discarded.
        var customer: CustomerIds?
    }

    /// How a read is answered (<doc:Behaviour#G4>): a completion handler on the delivery queue, or
    /// an awaiting task resumed directly.
    enum Reply: Sendable {
        case onDeliveryQueue(@Sendable (Result<[Segment], SegmentsError>) -> Void)
        case direct(@Sendable (Result<[Segment], SegmentsError>) -> Void)
    }

    /// What the reads decided.
    enum Action: Sendable {
        /// Answer each read with `result` narrowed to its category (<doc:Behaviour#G4>).
        case answer([Read], Result<SegmentsByCategory, SegmentsError>)
    }

    /// Reads waiting for `configure` beyond this many are refused (a bounded queue).
    static let maxWaitingForConfigure = 1_000

    private var waiting: [Read] = []
    private var reads = 0

    /// Whether no read waits.
    var isEmpty: Bool { waiting.isEmpty }

    /// A new read, not waiting yet.
    mutating func make(_ category: SegmentCategory, force: Bool, reply: Reply) -> Read {
        reads += 1
        return Read(id: reads, category: category, force: force, reply: reply)
    }

    /// The read waits for `configure` or the baseline; beyond the bound it is refused.
    mutating func waitForConfiguration(_ read: Read) -> [Action] {
        guard waiting.count < Self.maxWaitingForConfigure else {
            let error = SegmentsError(
                .notConfigured, "too many reads wait for configure (\(Self.maxWaitingForConfigure)); configure the client first")
            return [.answer([read], .failure(error))]
        }
        waiting.append(read)
        return []
    }

    /// The read waits for the flight of `customer`.
    mutating func waitForFlight(_ read: Read, of customer: CustomerIds?) {
        var read = read
        read.customer = customer
        waiting.append(read)
    }

    /// Every waiting read, in call order, for the caller to serve; none waits any more.
    mutating func takeAll() -> [Read] {
        defer { waiting = [] }
        return waiting
    }

    /// Answers every waiting read with `result`.
    mutating func answerAll(_ result: Result<SegmentsByCategory, SegmentsError>) -> [Action] {
        let answered = takeAll()
        return answered.isEmpty ? [] : [.answer(answered, result)]
    }

    /// Answers a still-waiting read with `.cancelled`; a read already answered is left alone, so
    /// every read is answered exactly once.
    mutating func withdraw(_ id: Int) -> [Action] {
        guard let index = waiting.firstIndex(where: { $0.id == id }) else { return [] }
        return [.answer([waiting.remove(at: index)], .failure(SegmentsError(.cancelled, "the read was cancelled")))]
    }

    /// The customer changed under the flight of `flightCustomer` (<doc:Behaviour#G6>): its reads
    /// wait again for `current`, at most `maxRetries` times each, then fail; a read that came after
    /// the change is not charged. Returns whether any read still waits.
    mutating func customerChanged(
        during flightCustomer: CustomerIds, current: CustomerIds?, maxRetries: Int
    ) -> (anyWaiting: Bool, actions: [Action]) {
        var retrying: [Read] = []
        var givenUp: [Read] = []
        for var read in waiting {
            if read.customer != flightCustomer {
                retrying.append(read)
            } else if read.customerRetries < maxRetries {
                read.customerRetries += 1
                read.customer = current
                retrying.append(read)
            } else {
                givenUp.append(read)
            }
        }
        waiting = retrying
        let actions: [Action] =
            givenUp.isEmpty ? [] : [.answer(givenUp, .failure(SegmentsError(.customerChanged, "the customer changed during the read")))]
        return (!retrying.isEmpty, actions)
    }
}
