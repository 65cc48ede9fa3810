// The sidebar buttons readers see must open the chapter list and the page contents.
//
// pydata-sphinx-theme 0.17 and sphinx-book-theme 1.3 attach their sidebar handlers to the
// *first* .primary-toggle / .secondary-toggle on the page only: the navbar icons that
// sphinx-book-theme hides. The buttons it shows in the article header get no handler, so
// on a phone there was no way to reach the chapter list. Here every other toggle forwards
// its click to the first one, whose handlers do the theme's own thing at every width:
// collapse the sidebar on a wide screen, open it as a drawer on a narrow one.
(function () {
  function forwardToggles() {
    for (const selector of [".primary-toggle", ".secondary-toggle"]) {
      const [bound, ...others] = document.querySelectorAll(selector);
      if (!bound) continue;
      for (const button of others) {
        button.addEventListener("click", (event) => {
          event.preventDefault();
          event.stopPropagation();
          bound.click();
        });
      }
    }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", forwardToggles);
  } else {
    forwardToggles();
  }
})();
