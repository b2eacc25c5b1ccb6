// What the theme's templates leave out, for axe-core (the page bodies are mended at build
// time by claimbook.extensions.book_site; these elements are in the templates).
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
  // Bootstrap puts a button's tooltip at the end of <body>, outside every landmark (axe:
  // region), for as long as a reader hovers or focuses the button. Each tooltip goes into
  // its button's nearest landmark instead. This listener runs before the theme's, which
  // makes the tooltips (bootstrap.js registers it at the end of the body), so Bootstrap
  // reads the container from the attribute.
  const landmarks = "header, nav, main, aside, footer, form[aria-label], section[aria-label], " +
    ["banner", "navigation", "main", "complementary", "contentinfo", "region", "search"]
      .map((role) => `[role=${role}]`).join(", ");
  let unnamed = 0;
  for (const trigger of document.querySelectorAll('[data-bs-toggle="tooltip"]')) {
    const landmark = trigger.closest(landmarks);
    if (!landmark || trigger.hasAttribute("data-bs-container")) continue;
    if (!landmark.id) landmark.id = `tooltip-landmark-${unnamed++}`;
    trigger.setAttribute("data-bs-container", `#${landmark.id}`);
  }
});
