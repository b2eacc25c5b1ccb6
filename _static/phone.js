// The scroll cue (a shadow at the edge of a formula with more to show, _static/site.css)
// belongs to a formula that overflows its box. Each formula's box is marked
// "trainable-overflows" while more than a pixel of it is hidden, and only a marked box shows
// the cue (_static/phone.css). The marks are set once MathJax has typeset the page, again
// once the fonts have loaded and the page with them (a glyph's width changes, its box's may
// not), and again whenever a box changes size (a rotated phone, an opened dropdown).
document.addEventListener("DOMContentLoaded", () => {
  const boxOf = element => element.matches("div.math")
    ? element.querySelector('mjx-container[display="true"]') : element;
  const mark = element => {
    const box = boxOf(element);
    if (box) box.classList.toggle("trainable-overflows", box.scrollWidth > box.clientWidth + 1);
  };
  const markAll = () => document.querySelectorAll("span.math, div.math").forEach(mark);
  const observer = new ResizeObserver(entries => entries.forEach(entry => mark(entry.target)));
  const start = () => {
    markAll();  // now: a check that awaits MathJax, then the fonts, finds the marks in place
    document.querySelectorAll("span.math, div.math").forEach(e => observer.observe(e));
    document.fonts.ready.then(markAll);
  };
  const typeset = window.MathJax && MathJax.startup && MathJax.startup.promise;
  if (typeset) typeset.then(start); else start();
  window.addEventListener("load", () => document.fonts.ready.then(markAll));
});
