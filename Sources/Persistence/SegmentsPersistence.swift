// File-backed stores arrive with the persistence issue (#4).
import SegmentsDomain
