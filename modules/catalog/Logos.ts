/**
 * Provider logos: the monochrome brand mark from `@lobehub/icons-static-svg` drawn white on a dark rounded
 * tile, or, for vendors without a mark there, a monogram tile with the same look. Always a 64×64 SVG.
 */
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import type { ProviderEntry } from "./overlay.ts"

const TILE = "#111827"
const MARK = "#FFFFFF"

const require = createRequire(import.meta.url)

const escapeXml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/** The inner elements and the viewBox of a lobehub icon, or null when the package lacks it. */
export const readBrandMark = (icon: string): { readonly viewBox: string; readonly body: string } | null => {
  try {
    const svg = Fs.readFileSync(require.resolve(`@lobehub/icons-static-svg/icons/${icon}.svg`), "utf8")
    const open = /^<svg\b([^>]*)>/.exec(svg.trim())
    const close = svg.lastIndexOf("</svg>")
    if (!open || close < 0) return null
    const viewBox = /viewBox="([^"]+)"/.exec(open[1] ?? "")?.[1] ?? "0 0 24 24"
    const body = svg.trim().slice(open[0].length, close).replace(/<title>[\s\S]*?<\/title>/g, "")
    return { viewBox, body }
  } catch {
    return null
  }
}

const monogram = (name: string) => {
  const words = name.replace(/\(.*?\)/g, "").trim().split(/[\s\-_.]+/).filter((w) => w.length > 0)
  const [first = "?", second] = words
  const letters = second === undefined ? first.slice(0, 2) : `${first.slice(0, 1)}${second.slice(0, 1)}`
  return letters.toUpperCase()
}

export interface Logo {
  readonly svg: string
  readonly kind: "brand" | "monogram"
}

export const renderLogo = (provider: ProviderEntry): Logo => {
  const title = escapeXml(provider.name)
  const head =
    `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64" role="img" aria-label="${title}">` +
    `<title>${title}</title><rect width="64" height="64" rx="14" fill="${TILE}"/>`
  const mark = provider.icon ? readBrandMark(provider.icon) : null
  if (mark) {
    // Monochrome marks paint with currentColor: color and fill make them white on the tile.
    return {
      kind: "brand",
      svg: head +
        `<svg x="14" y="14" width="36" height="36" viewBox="${mark.viewBox}" fill="${MARK}" color="${MARK}" fill-rule="evenodd">` +
        `${mark.body}</svg></svg>`
    }
  }
  return {
    kind: "monogram",
    svg: head +
      `<text x="32" y="33" text-anchor="middle" dominant-baseline="middle" fill="${MARK}" ` +
      `font-family="Inter, Helvetica, Arial, sans-serif" font-size="24" font-weight="700">${escapeXml(monogram(provider.name))}</text></svg>`
  }
}
