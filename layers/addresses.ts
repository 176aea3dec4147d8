/**
 * The one classification of IP addresses behind every outbound-request check (webhook targets, image URLs,
 * provider base URLs): public unicast, loopback, private networks, cloud metadata, or anything else.
 */
import ipaddr from "ipaddr.js"

export type AddressKind = "public" | "loopback" | "private" | "metadata" | "reserved" | "invalid"

/** Instance-metadata and host-agent addresses: never a target, whatever the operator allows. */
const METADATA_ADDRESSES: ReadonlySet<string> = new Set([
  "169.254.169.254",
  "169.254.170.2",
  "fd00:ec2::254",
  "168.63.129.16",
  "100.100.100.200",
  "192.0.0.192"
])

/** Ranges an operator may allow for self-hosted targets (private networks, link-local, unique-local, CGNAT). */
const PRIVATE_RANGES: ReadonlySet<string> = new Set(["private", "linkLocal", "uniqueLocal", "carrierGradeNat"])

/** IPv4-mapped IPv6 addresses are classified as the IPv4 address they carry. */
export const addressKind = (address: string): AddressKind => {
  if (!ipaddr.isValid(address)) return "invalid"
  const ip = ipaddr.process(address)
  if (METADATA_ADDRESSES.has(ip.toString())) return "metadata"
  const range = ip.range()
  if (range === "unicast") return "public"
  if (range === "loopback") return "loopback"
  return PRIVATE_RANGES.has(range) ? "private" : "reserved"
}
