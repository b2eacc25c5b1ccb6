// What the theme's templates leave out, for axe-core (the page bodies are mended at build
// time by claimbook.extensions.page_access; these elements are in the templates).
document.addEventListener("DOMContentLoaded", () => {
  // The primary sidebar's book title sits outside every landmark (axe: region).
  const sidebar = document.querySelector(".bd-sidebar-primary");
  if (sidebar && !sidebar.hasAttribute("role")) {
    sidebar.setAttribute("role", "region");
    sidebar.setAttribute("aria-label", "Book contents");
  }
  // The search field shows "Search Ctrl+K" but is named "Search" (axe:
  // label-content-name-mismatch): its name becomes the words it shows.
  for (const button of document.querySelectorAll(".search-button-field[aria-label]")) {
    button.removeAttribute("aria-label");
  }
  // A chapter with later pages (claimbook.pages) has a toggle in the sidebar that shows or
  // hides them: a summary holding only a chevron has no name (axe: summary-name). It is
  // named for what it opens.
  for (const summary of document.querySelectorAll("li.has-children > details > summary")) {
    const link = summary.parentElement.parentElement.querySelector(":scope > a");
    if (link && !summary.hasAttribute("aria-label")) {
      summary.setAttribute("aria-label", `Pages of ${link.textContent.trim()}`);
    }
  }
});
